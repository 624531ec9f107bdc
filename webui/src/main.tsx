import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from '@/app/App';
import { applyTheme, storedTheme } from '@/app/theme';
import './styles/global.css';

// Before the first paint, so a chosen theme never flashes the other one.
applyTheme(storedTheme());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
