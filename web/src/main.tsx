// The portal's entry point: one API client (watched for a password to change), the shell rendered into #app.
import { render } from 'preact';
import { ApiClient } from '../../src/client/index.ts';
import { App } from './app.tsx';
import { watchPasswordChange } from './password-change-watch.ts';
import './styles.css';

const watch = watchPasswordChange((input, init) => globalThis.fetch(input, init));
render(
  <App client={new ApiClient({ fetch: watch.fetch })} onPasswordChangeRequired={watch.subscribe} />,
  document.getElementById('app')!,
);
