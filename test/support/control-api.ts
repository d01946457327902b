/** An answer of the page's API: its status, its body as text (to search it for secrets), and as JSON. */
export interface ApiAnswer {
  status: number;
  text: string;
  json: any;
}

/** Calls the page's API on the control plane at `controlUrl`, as the page or a script would, with `token` as Bearer. */
export async function callApi(controlUrl: string, token: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${controlUrl}/api${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
}
