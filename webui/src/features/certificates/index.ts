export { CertificatesPage } from './components/CertificatesPage';
