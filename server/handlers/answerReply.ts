// The reply of an operation that answers with the model: the answer streamed or whole, with the id
// of the RAG query recorded with it.
import { TextStream } from '../context.js';
import type { RagAnswer } from '../domain/rag/generate.js';

export const answerReply = ({ queryId, answer }: RagAnswer) => ({
  status: 200 as const,
  body: typeof answer === 'string' ? answer : new TextStream(answer),
  headers: { 'SVC-QueryID': queryId },
});
