export { RevisionsPage } from './components/RevisionsPage';
