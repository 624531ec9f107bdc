export { NodesPage } from './components/NodesPage';
