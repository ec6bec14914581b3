import { writeFileSync } from 'node:fs';
import { GENERATED_TYPES, generateClientTypes } from '../test/support/openapi-types';

/** `npm run openapi:types`: regenerates test/generated/openapi.d.ts from the OpenAPI document. */
void generateClientTypes().then((text) => {
  writeFileSync(GENERATED_TYPES, text);
  console.log(`${GENERATED_TYPES}: written`);
});
