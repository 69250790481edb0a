// The messages a RAG call sends: the dataset's system prompt, each chunk's text as a numbered
// document, the conversation before its last message, and that message after the RAG prompt.
import type { ChatMessage } from '../../engines/llm/index.js';
import { htmlToText } from '../../text/html.js';

export interface SourceChunk {
  chunk_html: string | null;
  link: string | null;
}

export interface PromptParts {
  systemPrompt: string;
  ragPrompt: string;
  chunks: SourceChunk[];
  /** The conversation; the last message is the one answered. */
  conversation: ChatMessage[];
  includeLinks: boolean;
}

/** The text each chunk gives the model. */
export const sourceText = (chunk: SourceChunk) => htmlToText(chunk.chunk_html ?? '');

export function ragMessages(parts: PromptParts): { messages: ChatMessage[]; question: string } {
  const documents = parts.chunks.map((chunk, i): ChatMessage => {
    const link = parts.includeLinks && chunk.link ? `\nLink: ${chunk.link}` : '';
    return { role: 'user', content: `Document ${i + 1}:${link}\n${sourceText(chunk)}` };
  });
  const earlier = parts.conversation.slice(0, -1);
  const last = parts.conversation[parts.conversation.length - 1];
  const question = parts.ragPrompt ? `${parts.ragPrompt} ${last.content}` : last.content;
  return {
    messages: [{ role: 'system', content: parts.systemPrompt }, ...documents, ...earlier, { role: 'user', content: question }],
    question,
  };
}
