export { PendingBanner } from './components/PendingBanner';
export { RevisionDetailPage } from './components/RevisionDetailPage';
export { RevisionsPage } from './components/RevisionsPage';
