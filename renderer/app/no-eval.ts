import * as z from 'zod';

// The page's CSP allows no eval, so zod's compiled checks cannot run here. Told so before any schema
// is made, zod does not try: its probe would be reported on the console as a violation of the CSP.
// This module shares a chunk with zod (vite.config.ts), so it runs before any module that makes one.
z.config({ jitless: true });
