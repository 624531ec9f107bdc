export { AccountPage } from './components/AccountPage';
export { TokensPage } from './components/TokensPage';
export { UsersPage } from './components/UsersPage';
