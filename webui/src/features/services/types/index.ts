export * from './rule';
export * from './service';
