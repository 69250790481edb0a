// The messages a RAG call sends: the system prompt, each document (a chunk's text, with its link when
// asked) as a numbered message, the conversation before its last message, and that message after the
// RAG prompt.
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
    messages: [{ role: 'system', content: parts.systemPrompt }, ...documents, ...earlier, { role: 'user', content: question }],
    question,
  };
}
