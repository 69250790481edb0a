// Image edits (edit_image): the caller's images and prompt go to the dataset's endpoint with the model
// Trieve uses; the images made come back as data: URLs, so nothing is stored.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { editImages } from '../../engines/llm/images.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetEndpoint } from './endpoint.js';
import { inputImages } from './inputImages.js';
import { imageTypeOf } from './media.js';

export const IMAGE_EDIT_MODEL = 'gpt-image-1';

export async function editImage(services: Services, dataset: DatasetRow, body: T.EditImageReqPayload, signal?: AbortSignal): Promise<T.ImageEditResponse> {
  const endpoint = datasetEndpoint(services, dataset);
  const images = await inputImages(services.config.outbound, body.input_images, body.mime_type);
  const made = await editImages(
    endpoint,
    { model: IMAGE_EDIT_MODEL, images, prompt: body.prompt, n: body.n ?? 1, size: body.size ?? '1024x1024', quality: body.quality ?? 'low' },
    signal,
  ).catch(asBadRequest);
  if (made.length === 0) throw badRequest(`the LLM endpoint ${endpoint.baseUrl} answered no images`);
  return {
    image_urls: made.map((image) => {
      if ('url' in image) return image.url;
      // The type the bytes show; PNG, the endpoint's default, when they show none.
      const type = imageTypeOf(Buffer.from(image.base64.slice(0, 64), 'base64')) ?? 'image/png';
      return `data:${type};base64,${image.base64}`;
    }),
  };
}
