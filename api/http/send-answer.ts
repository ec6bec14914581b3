import type { Response } from 'express';
import type { Answer } from './answer';

/** Writes an Answer (answer.ts) to the socket: status, headers, body. */
export function sendAnswer(res: Response, answer: Answer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) {
    if (name === 'content-type') res.type(value);
    else res.setHeader(name, value);
  }
  if (answer.body === undefined) res.end();
  else res.send(answer.body);
}
