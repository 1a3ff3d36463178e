/** One page of a list, newest first (docs/api.md, Lists): the list answers `{data: […], hasMore}`. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
}
