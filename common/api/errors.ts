import * as z from 'zod';

/** Every refusal of the API: a message a person can act on, and a code where the page acts on it. */
export const errorAnswer = z.object({
  error: z.object({
    message: z.string(),
    /** `own_app_required`: the provider lets no app register itself; `redirect_url` is the callback to register. */
    code: z.string().optional(),
    redirect_url: z.string().optional(),
  }),
});
