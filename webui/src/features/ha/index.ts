export { HaPage } from './components/HaPage';
