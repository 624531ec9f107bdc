export { NewPoolPage } from './components/NewPoolPage';
export { PoolDetailPage } from './components/PoolDetailPage';
export { PoolsPage } from './components/PoolsPage';
