import { load, type CheerioAPI } from 'cheerio';
import { compile } from 'html-to-text';

// Page furniture rather than content; `header` and `footer` only outside the main content, where they hold titles.
const boilerplateSelector = 'script, style, noscript, template, nav, aside, form, iframe, svg, object, embed';
const pageFurnitureSelector = 'header, footer';
const mainContentSelector = 'main, [role=main], article';
const cookieBannerPattern = /cookie|consent|gdpr/i;

const headingSelectors = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
  selector,
  options: { uppercase: false },
}));

/** The readable text of a page without navigation, banners and scripts, plus its title. */
export function htmlToMainText(html: string): { title?: string; text: string } {
  const $ = load(html);
  const title = $('title').first().text().trim() || $('h1').first().text().trim() || undefined;

  $(boilerplateSelector).remove();
  $(pageFurnitureSelector)
    .filter((_, element) => $(element).closest(mainContentSelector).length === 0)
    .remove();
  $('[id], [class]')
    .not('html, body, main, article')
    .filter((_, element) =>
      cookieBannerPattern.test(`${$(element).attr('id') ?? ''} ${$(element).attr('class') ?? ''}`),
    )
    .remove();

  const text = toText(mainContentHtml($)) || toText($('body').html() ?? $.html());
  return { title, text };
}

/** Absolute http(s) links of a page, resolved against its `<base href>`, without fragments, deduplicated. */
export function extractLinks(html: string, pageUrl: string): string[] {
  const $ = load(html);
  const base = resolve($('base[href]').first().attr('href'), pageUrl) ?? pageUrl;
  const links = new Set<string>();
  $('a[href], area[href]').each((_, element) => {
    const link = resolve($(element).attr('href'), base);
    if (link) links.add(link);
  });
  return [...links];
}

/** The first of main, [role=main] and a lone article; several articles are a listing, so the body is kept whole. */
function mainContentHtml($: CheerioAPI): string {
  for (const selector of ['main', '[role=main]']) {
    const candidate = $(selector).first();
    if (candidate.length > 0) return candidate.html() ?? '';
  }
  const articles = $('article');
  if (articles.length === 1) return articles.html() ?? '';
  return $('body').html() ?? $.html();
}

// Compiled once: building the selector tree costs more than converting a typical page.
const convertToText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 80 } },
    ...headingSelectors,
  ],
});

function toText(html: string): string {
  const text = convertToText(html);
  return text
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function resolve(href: string | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}
