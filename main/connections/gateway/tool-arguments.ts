import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** A schema longer than this (as JSON) is not compiled: its tool's arguments go upstream unchecked. */
const MAX_SCHEMA_CHARS = 256 * 1024;
/** What an answer lists of a mismatch; the schema says the rest. */
const MAX_PROBLEMS = 10;

const OPTIONS: Options = {
  // Upstream schemas carry keywords of their own and formats of every kind: only the standard's keywords are checked.
  strict: false,
  validateFormats: false,
  validateSchema: false,
  allErrors: true,
};

/**
 * Checks a tool call's arguments against the tool's input schema (JSON Schema, as the upstream
 * published it) before they go upstream, so that a wrong call is answered with what is wrong.
 * Each schema is compiled once, on its first call. A schema that cannot be compiled (a draft this
 * validator does not know, a reference it cannot resolve, too large) checks nothing: the upstream
 * judges those arguments itself, as before.
 *
 * `pattern` is not checked: an upstream's regular expression run here on an agent's string could
 * take the server's whole time (catastrophic backtracking). The upstream still checks it.
 */
export class ToolArguments {
  private readonly compiled = new WeakMap<object, ValidateFunction | null>();
  // Made on the first call that needs one, not when the server starts (each costs milliseconds).
  private ajv: { draft7: Ajv; draft2020: Ajv } | undefined;

  /** What is wrong with `args` for this schema, one line each; empty when they fit (or cannot be checked). */
  problems(schema: Record<string, unknown>, args: Record<string, unknown> | undefined): string[] {
    const validate = this.validatorOf(schema);
    if (!validate || validate(args ?? {})) return [];
    const errors = validate.errors ?? [];
    const lines = errors.slice(0, MAX_PROBLEMS).map(describe);
    if (errors.length > MAX_PROBLEMS) lines.push(`and ${errors.length - MAX_PROBLEMS} more`);
    return lines;
  }

  private validatorOf(schema: Record<string, unknown>): ValidateFunction | null {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      this.ajv ??= { draft7: validator(new Ajv(OPTIONS)), draft2020: validator(new Ajv2020(OPTIONS)) };
      validate = compile(schema, this.ajv.draft7, this.ajv.draft2020);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

function validator(ajv: Ajv): Ajv {
  ajv.removeKeyword('pattern');
  return ajv;
}

function compile(schema: Record<string, unknown>, draft7: Ajv, draft2020: Ajv): ValidateFunction | null {
  try {
    if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) return null;
    const { $schema, ...rest } = schema;
    // Zod 4 and others publish 2020-12; older servers draft-07 or no $schema at all (read as draft-07).
    const ajv = typeof $schema === 'string' && /2019-09|2020-12/.test($schema) ? draft2020 : draft7;
    const validate = ajv.compile(rest);
    // Ajv keeps every compiled schema; these are replaced whenever a server's tools change.
    ajv.removeSchema(rest);
    return validate;
  } catch {
    return null;
  }
}

function describe(error: ErrorObject): string {
  const where = error.instancePath ? `arguments${error.instancePath.replace(/\//g, '.')}` : 'arguments';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties')
    return `${where} has "${String(params.additionalProperty)}", which the schema does not allow`;
  if (error.keyword === 'required') return `${where} lacks "${String(params.missingProperty)}", which is required`;
  if (error.keyword === 'enum') return `${where} must be one of ${JSON.stringify(params.allowedValues)}`;
  return `${where} ${error.message ?? 'does not fit the schema'}`;
}
