export { NewPoolPage } from './components/NewPoolPage';
export { PoolMembers } from './components/MembersPanel';
export { PoolDetailPage } from './components/PoolDetailPage';
export { PoolsPage } from './components/PoolsPage';
