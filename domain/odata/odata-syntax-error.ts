/**
 * The one error the OData parsers throw. The API turns it into a 400 problem that names the
 * offending text and its position (DESIGN §5), so every field is meant for the client.
 */
export class ODataSyntaxError extends Error {
  constructor(
    /** '$filter', '$orderby', '$expand' or '$search'. */
    readonly option: string,
    /** 0-based offset into the option's text (for nested $expand options: into the whole $expand). */
    readonly position: number,
    /** The text found at `position` ('' at end of input). */
    readonly offending: string,
    message: string,
  ) {
    super(message);
    this.name = 'ODataSyntaxError';
  }
}

/** Builds the error with the message shape `<option>: <detail> at position <n>[ <suffix>]`. */
export function syntaxError(
  option: string,
  position: number,
  offending: string,
  detail: string,
  suffix = '',
): ODataSyntaxError {
  const tail = suffix === '' ? '' : ` ${suffix}`;
  return new ODataSyntaxError(option, position, offending, `${option}: ${detail} at position ${position}${tail}`);
}

/** How found text is quoted in messages: `'eqq'`, or `end of input`. */
export function describeFound(offending: string): string {
  return offending === '' ? 'end of input' : `'${offending}'`;
}
