import { formatCount } from '@/lib/listView';
import { TextField } from './TextField';

type ListFilterProps = {
  /** The field's label, e.g. "Filter virtual services". */
  label: string;
  /** What can be typed, e.g. "Name, VIP, port, protocol or pool". */
  hint: string;
  value: string;
  onChange: (value: string) => void;
  shown: number;
  total: number;
  /** What is counted, plural: "virtual services". */
  noun: string;
};

/**
 * Filter-as-you-type above a list, with the count it leaves ("12 of 1,000 virtual
 * services") in a polite live region so screen readers hear what each keystroke did.
 */
export function ListFilter({ label, hint, value, onChange, shown, total, noun }: ListFilterProps) {
  const count = value ? `${formatCount(shown)} of ${formatCount(total)} ${noun}` : `${formatCount(total)} ${noun}`;
  return (
    <div className="list-filter">
      <TextField
        label={label}
        hint={hint}
        type="search"
        value={value}
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => onChange(event.target.value)}
      />
      <p className="list-count" role="status">
        {count}
      </p>
    </div>
  );
}
