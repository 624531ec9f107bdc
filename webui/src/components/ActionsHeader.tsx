/** The column heading over a table's row actions: named for screen readers, blank on screen. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span className="visually-hidden">Actions</span>
    </th>
  );
}
