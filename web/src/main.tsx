// The portal's entry point: one API client for the page, the shell rendered into #app.
import { render } from 'preact';
import { ApiClient } from '../../src/client/index.ts';
import { App } from './app.tsx';
import './styles.css';

render(<App client={new ApiClient()} />, document.getElementById('app')!);
