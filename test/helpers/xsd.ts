/**
 * XML read back as an importer would: validated against a published XML Schema, and queried by
 * XPath. libxml2 compiled to WebAssembly (npm libxml2-wasm): no native build, no network; a
 * schema's imports resolve from its own folder (their schemaLocation is relative).
 */
import fs from 'node:fs';
import { XmlDocument, XmlLibError, XsdValidator } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';

let registered = false;

/** What the schema at `xsdPath` finds wrong with `xml` ([] when valid), one message per error with its line. */
export function schemaErrors(xsdPath: string, xml: string): string[] {
  if (!registered) registered = xmlRegisterFsInputProviders() || true;
  const schema = XmlDocument.fromBuffer(fs.readFileSync(xsdPath), { url: xsdPath });
  try {
    const validator = XsdValidator.fromDoc(schema);
    try {
      const doc = XmlDocument.fromString(xml);
      try {
        validator.validate(doc);
        return [];
      } catch (err) {
        if (err instanceof XmlLibError) return err.details.map((d) => `line ${d.line}: ${d.message.trim()}`);
        throw err;
      } finally {
        doc.dispose();
      }
    } finally {
      validator.dispose();
    }
  } finally {
    schema.dispose();
  }
}

/** The string value of an XPath expression over `xml` (e.g. "string(/*\/dataset/title)"). */
export function xpathString(xml: string, expr: string): string {
  const doc = XmlDocument.fromString(xml);
  try {
    const v = doc.eval(expr);
    return typeof v === 'string' ? v : String(v);
  } finally {
    doc.dispose();
  }
}
