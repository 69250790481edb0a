// Handlers of the operations that need no key: the public page of a dataset.
import type { PublicPageHandler } from '../../generated/handlers.js';
import { TextStream } from '../context.js';
import { publicPage } from '../publicPage/index.js';

export const public_page: PublicPageHandler = async ({ path, services }) => {
  const page = await publicPage(services.store.db, path.dataset_id);
  return { status: 200, body: TextStream.whole(page.html, 'text/html; charset=utf-8'), headers: page.headers };
};
