import type { RequestHandler } from 'express';

interface Issue {
  code?: string;
  path?: unknown[];
  message?: string;
  expected?: string;
  values?: unknown[];
  format?: string;
}

/**
 * The MCP SDK's token, registration and revocation handlers answer a malformed request with zod's
 * validation report (JSON) as its error_description, which clients show to people: it becomes one
 * plain sentence per parameter here.
 */
export const plainOAuthErrors: RequestHandler = (_req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const description = (body as { error_description?: unknown } | null)?.error_description;
    const words = typeof description === 'string' ? validationWords(description) : undefined;
    return json(words === undefined ? body : { ...(body as object), error_description: words });
  };
  next();
};

/** A zod validation report in words ("code_verifier is missing."), or undefined when `text` is not one. */
export function validationWords(text: string): string | undefined {
  let issues: unknown;
  try {
    issues = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every((i: Issue) => typeof i?.message === 'string' && Array.isArray(i.path)))
    return undefined;
  const sentences = new Map<string, string>();
  for (const issue of issues as Issue[]) {
    const name = parameterName(issue.path!);
    if (!sentences.has(name)) sentences.set(name, sentence(name, issue));
  }
  return `${[...sentences.values()].join('; ')}.`;
}

function sentence(name: string, issue: Issue): string {
  if (issue.code === 'invalid_type')
    return issue.message!.endsWith('received undefined')
      ? `${name} is missing`
      : `${name} must be a${/^[aeiou]/.test(issue.expected ?? '') ? 'n' : ''} ${issue.expected}`;
  if (issue.code === 'invalid_value' && issue.values) return `${name} must be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
  if (issue.code === 'invalid_format' && issue.format === 'url') return `${name} must be a URL`;
  return `${name}: ${issue.message!.replace(/\.$/, '')}`;
}

/** `redirect_uris[0]`, `client_id`; the request itself when the path is empty. */
function parameterName(path: unknown[]): string {
  const name = path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i ? '.' : ''}${String(part)}`)).join('');
  return name || 'the request';
}
