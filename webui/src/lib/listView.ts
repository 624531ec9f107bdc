import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';

/** Which way a column is sorted, in the words `aria-sort` uses. */
export type SortDirection = 'ascending' | 'descending';
export type SortState<K extends string> = { key: K; direction: SortDirection };

/** What a list can be filtered on (the words people type) and sorted by (one value per column). */
export type ListViewSpec<T, K extends string> = {
  /** The texts a row is found by: name, address, port, protocol, pool name… */
  searchText: (row: T) => readonly (string | number | null | undefined)[];
  /** One comparable value per sortable column. */
  sortValues: Record<K, (row: T) => string | number>;
  /** The column the list is sorted by when the URL says nothing. */
  defaultSort: K;
};

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
const counts = new Intl.NumberFormat('en');

/** `1,000`: counts in the console's language. */
export function formatCount(count: number): string {
  return counts.format(count);
}

/** The filter's words, lower case: every one must appear in some field of a row. */
export function filterWords(query: string): string[] {
  return query.toLowerCase().split(/\s+/).filter(Boolean);
}

/** Whether every word is a substring of one of the row's fields (case-insensitive). */
export function matchesWords(fields: readonly (string | number | null | undefined)[], words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const haystack = fields
    .filter((field) => field !== null && field !== undefined && field !== '')
    .map((field) => String(field).toLowerCase())
    .join('\n');
  return words.every((word) => haystack.includes(word));
}

/** Numbers as numbers, texts in natural order (`svc-9` before `svc-10`, `10.0.0.9` before `10.0.0.10`). */
export function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return collator.compare(String(a), String(b));
}

/** `?sort=port` is ascending, `?sort=-port` descending; unknown keys fall back to the default. */
export function parseSort<K extends string>(param: string | null, keys: readonly K[], fallback: K): SortState<K> {
  const descending = param?.startsWith('-') ?? false;
  const key = (descending ? param!.slice(1) : param) as K | null;
  if (key && keys.includes(key)) return { key, direction: descending ? 'descending' : 'ascending' };
  return { key: fallback, direction: 'ascending' };
}

/** How long typing must pause before the filter is copied to the URL. */
export const FILTER_URL_DELAY_MS = 250;

/**
 * The filter text: typed into local state at once, copied to the URL when typing pauses.
 * The router commits navigations in a transition, so an input bound to the URL alone shows
 * the old text until it does and a key typed meanwhile lands on it (fast typing lost
 * letters); and every navigation re-renders every link of a long list. A URL change that is
 * not one of our own copies (a link, back/forward) replaces the text.
 */
function useFilterText(urlText: string, writeUrl: (text: string) => void) {
  const [text, setText] = useState(urlText);
  const ours = useRef<string[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => {
    const caughtUp = ours.current.indexOf(urlText);
    if (caughtUp >= 0) {
      ours.current.splice(0, caughtUp + 1);
      return;
    }
    clearTimeout(timer.current);
    ours.current = [];
    setText(urlText);
  }, [urlText]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const change = useCallback(
    (next: string) => {
      setText(next);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        ours.current.push(next);
        writeUrl(next);
      }, FILTER_URL_DELAY_MS);
    },
    [writeUrl],
  );
  return [text, change] as const;
}

const NO_RESETS: readonly string[] = [];
const PAGE_RESETS: readonly string[] = ['page'];

/**
 * The filter (`?q=`), sort order (`?sort=`) and any other state of a list kept in the URL, so
 * that they survive a reload and can be shared as a link. `update` sets one parameter (and
 * drops those in `resets`, as a new filter or order goes back to the first page).
 */
function useListParams<K extends string>(keys: readonly K[], defaultSort: K, resets: readonly string[] = NO_RESETS) {
  const [params, setParams] = useSearchParams();
  const sort = parseSort(params.get('sort'), keys, defaultSort);

  const update = useCallback(
    (name: string, value: string) =>
      setParams(
        (current) => {
          const next = new URLSearchParams(current);
          if (value) next.set(name, value);
          else next.delete(name);
          if (name !== 'page') for (const reset of resets) next.delete(reset);
          return next;
        },
        { replace: true },
      ),
    [setParams, resets],
  );

  const urlQuery = params.get('q') ?? '';
  const writeQuery = useCallback((value: string) => update('q', value), [update]);
  const [query, setQuery] = useFilterText(urlQuery, writeQuery);

  const toggleSort = useCallback(
    (key: K) => {
      const descending = sort.key === key && sort.direction === 'ascending';
      update('sort', key === defaultSort && !descending ? '' : `${descending ? '-' : ''}${key}`);
    },
    [sort.key, sort.direction, defaultSort, update],
  );

  return { params, update, sort, toggleSort, query, setQuery, urlQuery };
}

/**
 * A list's filter and sort order kept in the URL (`useListParams`), applied in the browser to
 * rows it already holds. The rows shown follow a deferred copy of the filter: typing stays
 * immediate while a long list re-renders. `spec` should be a module constant (its functions
 * are memo dependencies).
 */
export function useListView<T, K extends string>(rows: readonly T[] | undefined, spec: ListViewSpec<T, K>) {
  const { searchText, sortValues, defaultSort } = spec;
  const { sort, toggleSort, query, setQuery } = useListParams(Object.keys(sortValues) as K[], defaultSort);
  const deferredQuery = useDeferredValue(query);

  const sorted = useMemo(() => {
    if (!rows) return [];
    const value = sortValues[sort.key];
    const tieBreak = sortValues[defaultSort];
    const sign = sort.direction === 'ascending' ? 1 : -1;
    // Equal values keep the default order (by name), whichever way the column goes.
    return [...rows].sort((a, b) => sign * compareValues(value(a), value(b)) || compareValues(tieBreak(a), tieBreak(b)));
  }, [rows, sortValues, defaultSort, sort.key, sort.direction]);

  const visible = useMemo(() => {
    const words = filterWords(deferredQuery);
    return words.length ? sorted.filter((row) => matchesWords(searchText(row), words)) : sorted;
  }, [sorted, searchText, deferredQuery]);

  return { query, setQuery, sort, toggleSort, visible, total: rows?.length ?? 0, stale: deferredQuery !== query };
}

/** How a list paged on the server is sorted: each column's terms of the API's `ordering`. */
export type ServerListSpec<K extends string> = {
  /** The API's columns for each sortable column, ascending (`-enabled`: enabled ones first). */
  ordering: Record<K, readonly string[]>;
  /** The column the list is sorted by when the URL says nothing; it also breaks ties. */
  defaultSort: K;
  pageSize: number;
};

/** What a server-paged list asks the API for. */
export type ServerListRequest = { search: string; ordering: string; limit: number; offset: number };

function orderingTerms(terms: readonly string[], direction: SortDirection): string[] {
  if (direction === 'ascending') return [...terms];
  return terms.map((term) => (term.startsWith('-') ? term.slice(1) : `-${term}`));
}

/**
 * A list searched, sorted and paged by the API: its filter, order and page (`?page=`) kept in
 * the URL (`useListParams`). The request follows the URL, so the API is asked once typing
 * pauses, not at each key; a new filter or order goes back to the first page. `spec` should
 * be a module constant.
 */
export function useServerListView<K extends string>(spec: ServerListSpec<K>) {
  const { ordering, defaultSort, pageSize } = spec;
  const { params, update, sort, toggleSort, query, setQuery, urlQuery } = useListParams(
    Object.keys(ordering) as K[],
    defaultSort,
    PAGE_RESETS,
  );
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const setOffset = useCallback((offset: number) => update('page', offset > 0 ? String(Math.floor(offset / pageSize) + 1) : ''), [update, pageSize]);
  const terms = [...orderingTerms(ordering[sort.key], sort.direction)];
  if (sort.key !== defaultSort) terms.push(...ordering[defaultSort]);
  const request: ServerListRequest = { search: urlQuery.trim(), ordering: terms.join(','), limit: pageSize, offset: (page - 1) * pageSize };
  return { query, setQuery, sort, toggleSort, request, setOffset, typing: query !== urlQuery };
}

/** The API's query for `request`: the search only when there is one. */
export function pageQuery({ search, ordering, limit, offset }: ServerListRequest) {
  return { limit, offset, ordering, ...(search ? { search } : {}) };
}

/**
 * A list page's data, paged on the server (`useServerListView`): the page asked for (the
 * previous one stays on screen while the next loads), the count of every row, and what the
 * page shows of them. A page past the end (its last rows deleted, or an old link asked for
 * `?page=9`) goes back to the last one. `queryKey` is the objects' key, so what refreshes
 * them refreshes the list.
 */
export function useServerList<K extends string, T>(
  spec: ServerListSpec<K>,
  queryKey: readonly unknown[],
  fetchPage: (request: ServerListRequest) => Promise<{ count: number; results: T[] }>,
  fetchCount: () => Promise<number>,
) {
  const list = useServerListView(spec);
  const { request, setOffset } = list;
  const page = useQuery({ queryKey: [...queryKey, 'page', request], queryFn: () => fetchPage(request), placeholderData: keepPreviousData });
  const total = useQuery({ queryKey: [...queryKey, 'count'], queryFn: fetchCount });
  const rows = page.data?.results;
  const matching = page.isPlaceholderData ? undefined : page.data?.count;
  useEffect(() => {
    if (matching && rows?.length === 0 && request.offset >= matching) setOffset(Math.floor((matching - 1) / request.limit) * request.limit);
  }, [matching, rows?.length, request.offset, request.limit, setOffset]);
  return {
    ...list,
    page,
    rows,
    total: total.data,
    matching: page.data?.count ?? 0,
    searched: request.search !== '',
    busy: list.typing || page.isPlaceholderData,
  };
}
