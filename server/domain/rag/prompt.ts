// The messages a RAG call sends: the system prompt, each document (a chunk's text, with its link when
// asked) as a numbered message, the conversation before its last message, and that message after the
// RAG prompt, with the images the model is to look at.
import type { ChatMessage } from '../../engines/llm/index.js';
import { htmlToText } from '../../text/html.js';

export interface SourceChunk {
  chunk_html: string | null;
  link: string | null;
}

/** What the model reads of one source. */
export interface RagDocument {
  text: string;
  link: string | null;
}

export interface PromptParts {
  systemPrompt: string;
  ragPrompt: string;
  documents: RagDocument[];
  /** The conversation; the last message is the one answered. */
  conversation: ChatMessage[];
  includeLinks: boolean;
  /** URLs of images given with the last message. */
  images?: string[];
}

/** Images of the chunks a model is shown by default (`image_config.images_per_chunk`). */
const IMAGES_PER_CHUNK = 5;

/** The caller's images, and each chunk's first images when `image_config.use_images` asks for them. */
export function promptImages(
  callers: string[] | null | undefined,
  chunks: { image_urls: string[] | null }[],
  config: { use_images?: boolean | null; images_per_chunk?: number | null } | null | undefined,
): string[] {
  const perChunk = config?.use_images ? (config.images_per_chunk ?? IMAGES_PER_CHUNK) : 0;
  return [...(callers ?? []), ...chunks.flatMap((chunk) => (chunk.image_urls ?? []).slice(0, perChunk))];
}

/** The text each chunk gives the model. */
export const sourceText = (chunk: SourceChunk) => htmlToText(chunk.chunk_html ?? '');

export function ragMessages(parts: PromptParts): { messages: ChatMessage[]; question: string } {
  const documents = parts.documents.map((document, i): ChatMessage => {
    const link = parts.includeLinks && document.link ? `\nLink: ${document.link}` : '';
    return { role: 'user', content: `Document ${i + 1}:${link}\n${document.text}` };
  });
  const earlier = parts.conversation.slice(0, -1);
  const last = parts.conversation[parts.conversation.length - 1];
  const question = parts.ragPrompt ? `${parts.ragPrompt} ${last.content}` : last.content;
  return {
    messages: [{ role: 'system', content: parts.systemPrompt }, ...documents, ...earlier, { role: 'user', content: question, images: parts.images }],
    question,
  };
}
