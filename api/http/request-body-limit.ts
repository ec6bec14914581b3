import { tooLarge } from '../../domain/errors/domain-error';

/** The body limit of a lone request (the API's JSON parser), held per request of a `$batch` too. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** The 413 of a body over MAX_REQUEST_BODY_BYTES, alone or in a batch. */
export const requestBodyTooLarge = () => tooLarge('The request body exceeds the 1 MiB limit.');
