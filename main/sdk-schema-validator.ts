import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

let ajv: AjvJsonSchemaValidator | undefined;

/**
 * The JSON Schema validator given to every MCP SDK Server and Client here. Unless given one, each
 * makes an Ajv instance with every format (about half a millisecond and tens of KiB), and a Client
 * compiles the output schema of every tool an upstream lists, tens of milliseconds on the first
 * `tools/list` an agent waits for. Nothing here validates with them: no session sends elicitation,
 * and upstream calls go through `request`, not `callTool`. So one Ajv serves the process, made on
 * first use, and a schema is compiled when its validator first runs.
 */
export const SDK_SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]): JsonSchemaValidator<T> {
    let validate: JsonSchemaValidator<T> | undefined;
    return (input) => (validate ??= (ajv ??= new AjvJsonSchemaValidator()).getValidator<T>(schema))(input);
  },
};
