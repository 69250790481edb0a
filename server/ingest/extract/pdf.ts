// PDF to text with unpdf (PDF.js built for servers, no native code): page by page, each text item
// followed by a line break where PDF.js reports one, pages separated by a line break.
import { getDocumentProxy } from 'unpdf';
import { UnreadableFileError } from './types.js';

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

export async function pdfPages(bytes: Buffer): Promise<string[]> {
  let pdf;
  try {
    // verbosity 0: PDF.js would print its warnings about damaged files to the console.
    // A copy: PDF.js may take over (detach) the buffer it is given, and a small Buffer shares a pool.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    throw new UnreadableFileError(`the PDF could not be read: ${(error as Error).message}`);
  }
  try {
    const pages: string[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      try {
        const content = await page.getTextContent();
        pages.push((content.items as TextItem[]).map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : '')).join(''));
      } finally {
        page.cleanup();
      }
    }
    return pages;
  } catch (error) {
    if (error instanceof UnreadableFileError) throw error;
    throw new UnreadableFileError(`the PDF's text could not be extracted: ${(error as Error).message}`);
  } finally {
    await pdf.loadingTask.destroy();
  }
}
