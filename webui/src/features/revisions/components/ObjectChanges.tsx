import { Badge, type BadgeTone, Button, TableWrap } from '@/components';
import { CHANGES_PAGE_SIZE } from '../hooks/useRevisions';
import { type ChangeSummary, describeField, describeObject, type FieldChange, formatValue, type ObjectChange } from '../types';

const TONE: Record<ObjectChange['change'], BadgeTone> = { added: 'success', removed: 'danger', changed: 'info' };
// Lists longer than this start folded, so one big change does not hide the rest.
const OPEN_UP_TO = 8;

export function ChangeBadge({ change }: { change: ObjectChange['change'] }) {
  return <Badge tone={TONE[change]}>{change}</Badge>;
}

function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <code className="change-value">{formatValue(value)}</code>;
}

function FieldTable({ label, fields }: { label: string; fields: readonly FieldChange[] }) {
  return (
    <TableWrap label="Changed objects">
      <table className="table table-compact field-changes">
        <caption className="visually-hidden">Fields of {label}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => (
            <tr key={field.field}>
              <th scope="row" title={field.field}>
                {describeField(field.field)}
              </th>
              <td className="change-old">
                <Value value={field.old} />
              </td>
              <td className="change-new">
                <Value value={field.new} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** An object's field changes; in one added or removed, those at their defaults folded away. */
function ObjectFields({ label, fields }: { label: string; fields: readonly FieldChange[] }) {
  const chosen = fields.filter((field) => !field.default);
  const defaults = fields.filter((field) => field.default);
  return (
    <>
      {chosen.length ? <FieldTable label={label} fields={chosen} /> : null}
      {defaults.length ? (
        <details className="default-fields">
          <summary className="muted">
            {defaults.length} field{defaults.length === 1 ? '' : 's'} at {defaults.length === 1 ? 'its default' : 'their defaults'}
          </summary>
          <FieldTable label={`${label}, at their defaults`} fields={defaults} />
        </details>
      ) : null}
    </>
  );
}

/**
 * Objects added, removed or changed, each with its field changes (old → new). Secrets come
 * as the API sends them ("(changed)", "(set)"), never their values.
 */
export function ObjectChanges({ objects }: { objects: readonly ObjectChange[] }) {
  const open = objects.length <= OPEN_UP_TO;
  return (
    <ul className="object-changes" aria-label="Changed objects">
      {objects.map((object) => {
        const { kind, name } = describeObject(object.path);
        const label = `${kind.toLowerCase()} ${name}`.trim();
        return (
          <li key={object.path} className="object-change" data-change={object.change}>
            <details open={open}>
              <summary>
                <span className="object-kind">{kind}</span> <strong className="mono">{name || object.path}</strong> <ChangeBadge change={object.change} />{' '}
                <span className="muted">
                  {object.fields.length} field{object.fields.length === 1 ? '' : 's'}
                </span>
              </summary>
              <ObjectFields label={label} fields={object.fields} />
            </details>
          </li>
        );
      })}
    </ul>
  );
}

/** How the objects changed, in words: "2 added, 1 changed" (kinds with none left out). */
export function describeSummary(summary: ChangeSummary): string {
  const kinds = (['added', 'changed', 'removed'] as const).filter((kind) => summary[kind] > 0);
  return kinds.map((kind) => `${summary[kind]} ${kind}`).join(', ');
}

/** Under a list read a page at a time: how much of it is shown, and a button for the next page. */
export function ShowMore({ shown, count, busy, onMore }: { shown: number; count: number; busy: boolean; onMore: () => void }) {
  const left = count - shown;
  if (left <= 0) return null;
  return (
    <p className="show-more">
      <span className="muted" role="status">
        {shown} of {count} shown.
      </span>{' '}
      <Button size="small" variant="ghost" busy={busy} onClick={onMore}>
        Show {Math.min(left, CHANGES_PAGE_SIZE)} more
      </Button>
    </p>
  );
}
