/** The OASIS TC's CSDL tools ship no types: the calls the tests make. */

declare module 'odata-csdl' {
  /** CSDL XML → CSDL JSON; `strict` throws on the first problem, otherwise they land in `messages`. */
  export function xml2json(
    xml: string,
    options?: { strict?: boolean; messages?: unknown[]; lineNumbers?: boolean },
  ): Record<string, unknown>;
}

declare module 'odata-openapi' {
  /** CSDL JSON → OpenAPI; what it could not map lands in `messages`. */
  export function csdl2openapi(
    csdl: Record<string, unknown>,
    options?: {
      scheme?: string;
      host?: string;
      basePath?: string;
      openapiVersion?: string;
      messages?: unknown[];
    },
  ): Record<string, unknown>;
}
