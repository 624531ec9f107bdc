export * from './forwarding';
export * from './rule';
export * from './service';
export * from './wizard';
