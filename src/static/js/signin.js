// The sign-in page works without script; this only stops a double click from sending the token
// twice (each wrong attempt counts towards the per-address limit).
const form = document.getElementById('signin-form');
if (form) {
  form.addEventListener('submit', () => {
    document.getElementById('signin-submit').disabled = true;
  });
}
document.body.dataset.ready = 'true';
