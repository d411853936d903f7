/** Form pieces the pages share: labelled fields the API's error `param` marks, and the error line. */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { ApiError } from './api';

/** A field's element id: `${form}-${param}`, param being the API's name for it, so an error's `param` finds it. */
export const fieldId = (form: string, param: string): string => `${form}-${param}`;
const errorId = (form: string): string => `${form}-error`;

/** Attributes marking a control invalid when the API's last error names its param. */
export function invalidIf(error: unknown, form: string, param: string): Record<string, string> {
  return error instanceof ApiError && error.param === param ? { 'aria-invalid': 'true', 'aria-errormessage': errorId(form) } : {};
}

export function Field({ form, param, label, hint, children }: { form: string; param: string; label: string; hint?: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={fieldId(form, param)}>{label}</label>
      {children}
      {hint && <small class="hint">{hint}</small>}
    </div>
  );
}

/** The API's message; focus moves to the field it names so keyboard and screen-reader users land on what to fix. */
export function ErrorMessage({ form, error }: { form: string; error: unknown }) {
  useEffect(() => {
    if (error instanceof ApiError && error.param) document.getElementById(fieldId(form, error.param))?.focus();
  }, [error, form]);
  if (!error) return null;
  return (
    <p id={errorId(form)} class="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/** A download link for a blob URL, styled as a button. */
export function Download({ href, filename, children }: { href: string; filename: string; children: ComponentChildren }) {
  return (
    <a class="button secondary" href={href} download={filename}>
      {children}
    </a>
  );
}
