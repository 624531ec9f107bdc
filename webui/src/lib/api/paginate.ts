type Page<T> = { count: number; results: T[] };

const PAGE_SIZE = 1000; // the API's largest page

/** Every item of a paginated list, fetched page by page (`{count, results}` with limit/offset). */
export async function listAll<T>(fetchPage: (limit: number, offset: number) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (;;) {
    const page = await fetchPage(PAGE_SIZE, items.length);
    items.push(...page.results);
    if (page.results.length === 0 || items.length >= page.count) return items;
  }
}
