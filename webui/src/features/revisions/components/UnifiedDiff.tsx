type LineKind = 'file' | 'hunk' | 'add' | 'del' | 'context' | 'note';

/** The kind of one line of a unified diff (as Python's difflib writes it). */
export function lineKind(line: string): LineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith(' ')) return 'context';
  return 'note';
}

/**
 * A unified diff as the API sends it, line by line: added and removed lines keep their
 * leading + and − (so they read the same without colour) and are also marked by colour.
 */
export function UnifiedDiff({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  const added = lines.filter((l) => lineKind(l) === 'add').length;
  const removed = lines.filter((l) => lineKind(l) === 'del').length;
  return (
    <figure className="diff" aria-label={label}>
      <figcaption className="muted">
        {label}: {added} line{added === 1 ? '' : 's'} added, {removed} removed
      </figcaption>
      <pre className="diff-lines" tabIndex={0}>
        {lines.map((line, index) => (
          // Lines have no identity but their place; the list never reorders.
          <span key={index} className={`diff-line diff-${lineKind(line)}`}>
            {line}
            {'\n'}
          </span>
        ))}
      </pre>
    </figure>
  );
}
