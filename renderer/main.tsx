import './styles.css';

// The page itself (start.tsx) is fetched and run after the next frame when the host drew the first
// screen (#root has its HTML): the browser paints that first, rather than after some 300 KB of script
// were compiled and ran. Preloading it from the index instead measured worse: its compiling then
// competes with that first paint (bench/README.md).
if (document.getElementById('root')?.firstElementChild) requestAnimationFrame(() => setTimeout(() => void import('./start')));
else void import('./start');
