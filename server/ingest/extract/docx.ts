// DOCX to text with mammoth: its raw text, paragraphs separated by blank lines.
import mammoth from 'mammoth';
import { UnreadableFileError } from './types.js';

export async function docxText(bytes: Buffer): Promise<string> {
  try {
    const { value } = await mammoth.extractRawText({ buffer: bytes });
    return value;
  } catch (error) {
    throw new UnreadableFileError(`the DOCX file could not be read: ${(error as Error).message}`);
  }
}
