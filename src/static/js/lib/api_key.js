// The API key field's rules, shared by the chat's first-start card (chat/key_setup.js) and
// Settings → General (settings/general.js): an empty entry is refused before any request, and a
// key the server refused is explained in the same words in both places.
import { t } from './i18n.js';

/** The key typed in `input`, trimmed; when there is none, says so in `error`, focuses the field
 * and returns ''. Clears an earlier error otherwise. */
export function enteredKey(input, error) {
  const key = input.value.trim();
  error.textContent = key ? '' : t('common.api_key.missing');
  if (!key) input.focus();
  return key;
}

/** Marks `input` as refused with the reason for `err` in `error`, and focuses it again. */
export function showKeyRefused(input, error, err) {
  input.setAttribute('aria-invalid', 'true');
  error.textContent = keyErrorMessage(err);
  input.focus();
}

/** A person-facing explanation of why a key was not accepted. */
function keyErrorMessage(err) {
  if (err.code === 'invalid_api_key') {
    return t('common.api_key.rejected');
  }
  if (err.code === 'validation_error') {
    return t('common.api_key.malformed');
  }
  return err.message;
}
