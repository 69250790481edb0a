// A streamed answer as the reply sends it: the model's parts between a head and a tail. It is begun
// before the reply is (a model that fails before its first words is a 400, not a broken stream) and
// finished (stored, recorded) before its tail is sent and the reply ends, so that an answer whose
// finishing fails is cut rather than ended as if whole. A client that leaves stops it unfinished.
import { asBadRequest } from './endpoint.js';

export interface Framing {
  head?: string;
  tail?: string;
}

export async function startStream(
  parts: AsyncIterable<string>,
  framing: Framing,
  finish: (completion: string) => Promise<void>,
): Promise<AsyncIterable<string>> {
  const model = parts[Symbol.asyncIterator]();
  const first = await model.next().catch(asBadRequest);
  return (async function* () {
    if (framing.head) yield framing.head;
    let completion = '';
    for (let next = first; !next.done; next = await model.next()) {
      completion += next.value;
      yield next.value;
    }
    await finish(completion);
    if (framing.tail) yield framing.tail;
  })();
}
