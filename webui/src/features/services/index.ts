export { ServiceDetailPage } from './components/ServiceDetailPage';
export { NewServicePage } from './components/NewServicePage';
export { EditServicePage, NewServiceFormPage } from './components/ServiceFormPage';
export { ServicesPage } from './components/ServicesPage';
