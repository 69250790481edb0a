// Errors that carry their HTTP status; the error middleware turns every one into `{message}`.

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = (message: string) => new HttpError(401, message);
export const forbidden = (message: string) => new HttpError(403, message);
export const notFound = (message: string) => new HttpError(404, message);
export const payloadTooLarge = (message: string) => new HttpError(413, message);
export const planLimitReached = (message: string) => new HttpError(426, message);
export const unavailable = (message: string) => new HttpError(503, message);
