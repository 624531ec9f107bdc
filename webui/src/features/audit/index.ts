export { AuditPage } from './components/AuditPage';
