import { Component, Suspense, type ReactNode } from 'react';
import { ErrorNote } from './ErrorNote';
import { Loading } from './Loading';

/**
 * A part of the page whose code comes in a chunk of its own: `fallback` while the chunk is on its way,
 * and a note with a reload if it cannot be loaded (the app was updated since the page loaded and the
 * old chunk is gone, or the connection dropped), where React would otherwise blank the whole window.
 */
export function LoadedPart({ children, fallback = <Loading /> }: { children: ReactNode; fallback?: ReactNode }) {
  return (
    <LoadFailure>
      <Suspense fallback={fallback}>{children}</Suspense>
    </LoadFailure>
  );
}

class LoadFailure extends Component<{ children: ReactNode }, { error?: unknown }> {
  override state: { error?: unknown } = {};

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override render() {
    if (!('error' in this.state)) return this.props.children;
    // React keeps a chunk that failed as failed: a reload asks the server again (for the current build's chunks).
    return (
      <ErrorNote error={this.state.error} title="This part of the page could not be loaded." onRetry={() => window.location.reload()} />
    );
  }
}
