import { useQuery } from '@tanstack/react-query';
import { installHostsQuery, putSecret } from '../../api/connections';
import { emptySecretChoice, resolveSecret, SecretPicker, type SecretChoice } from './SecretPicker';

/** A variable of a local server and the place secret its value comes from. */
export interface VariableChoice {
  /** Stable across edits of the list (React key). */
  key: number;
  name: string;
  description?: string;
  required: boolean;
  secret: SecretChoice;
}

export const newVariable = (key: number, name = '', required = true, description?: string): VariableChoice => ({
  key,
  name,
  required,
  secret: emptySecretChoice(),
  ...(description && { description }),
});

/** Each variable's value: a secret of the place (made first when new); a variable not required and left unset is left out. */
export async function resolveVariables(
  root: string,
  variables: readonly VariableChoice[],
  existing: readonly string[] | undefined,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const v of variables) {
    if (!v.required && !v.secret.pick) continue;
    env[v.name.trim()] = await resolveSecret(v.secret, (n, value, replace) => putSecret(root, n, value, replace), existing);
  }
  return env;
}

/** One secret picker per variable of a catalog entry, each saying what the server reads it for. */
export function DeclaredVariables({
  root,
  variables,
  onChange,
}: {
  root: string;
  variables: VariableChoice[];
  onChange: (next: VariableChoice[]) => void;
}) {
  return (
    <>
      {variables.map((v) => (
        <SecretPicker
          key={v.key}
          root={root}
          value={v.secret}
          optional={!v.required}
          legend={`${v.name}${v.description ? `: ${v.description}` : ''}${v.required ? '' : ' (optional)'}, from a secret of this place`}
          valueLabel={`Value of ${v.name}`}
          onChange={(secret) => onChange(variables.map((x) => (x.key === v.key ? { ...x, secret } : x)))}
        />
      ))}
    </>
  );
}

/** The hosts installing a package with `command` (npx, uvx) reaches on this machine: its registry's. None for other programs. */
export function useInstallHosts(command: string): string[] {
  return useQuery(installHostsQuery(command)).data?.hosts ?? [];
}
