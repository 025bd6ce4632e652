// Worker entry: registers tsx in this thread (Node 20 does not apply the parent's --import hooks
// to a worker's entry), then loads the TypeScript worker.
import { register } from 'tsx/esm/api';
register();
await import('./decode-worker.ts');
