import * as z from 'zod';

// The page's CSP allows no eval, so zod's compiled checks cannot run here. Told so before any schema
// is made (this module is the page's first import), zod does not try: its probe would be reported
// on the console as a violation of the CSP.
z.config({ jitless: true });
