/** A form's Save and Cancel while a change waits to be saved; both wait while it saves. */
export function SaveCancel({ label, pending, onCancel }: { label: string; pending: boolean; onCancel: () => void }) {
  return (
    <div className="form-actions">
      <button type="submit" className="button primary" disabled={pending}>
        {pending ? 'Saving…' : label}
      </button>
      <button type="button" className="button" onClick={onCancel} disabled={pending}>
        Cancel
      </button>
    </div>
  );
}
