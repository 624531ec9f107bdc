export { EditServicePage, NewServicePage } from './components/ServiceFormPage';
export { ServicesPage } from './components/ServicesPage';
