import { extractLinks, htmlToMainText } from './html-text';

describe('htmlToMainText', () => {
  const page = `<!doctype html>
    <html><head><title> Opening hours </title><style>.x { color: red }</style></head>
    <body class="has-cookie-banner">
      <header><a href="/">Logo text</a></header>
      <nav><a href="/about">Navigation link</a></nav>
      <div id="cookie-banner">We use cookies</div>
      <div class="gdpr-consent">Accept all</div>
      <main>
        <article>
          <header><h1>Our opening hours</h1></header>
          <p>We are open <a href="/contact">every weekday</a>.</p>
          <img src="/photo.jpg" alt="Photo of the shop">


          <p>Second paragraph.</p>
          <table><tr><th>Day</th><th>Hours</th></tr><tr><td>Monday</td><td>9 to 5</td></tr></table>
          <script>console.log('script text')</script>
          <noscript>Enable JavaScript</noscript>
        </article>
      </main>
      <aside>Sidebar text</aside>
      <form><label>Newsletter signup</label></form>
      <footer>Footer text</footer>
    </body></html>`;

  it('keeps the main content readable', () => {
    const { title, text } = htmlToMainText(page);
    expect(title).toBe('Opening hours');
    expect(text).toContain('Our opening hours'); // headings keep their case
    expect(text).toContain('We are open every weekday.'); // links without their href
    expect(text).toMatch(/Day\s+Hours\nMonday\s+9 to 5/); // table rows stay on their own lines
    expect(text).not.toMatch(/\n\s*\n\s*\n/);
    expect(text).toBe(text.trim());
  });

  it('drops navigation, banners, scripts and page furniture', () => {
    const { text } = htmlToMainText(page);
    for (const furniture of [
      'Logo text',
      'Navigation link',
      'We use cookies',
      'Accept all',
      'Sidebar text',
      'Newsletter',
      'Footer text',
      'script text',
      'Enable JavaScript',
      'color: red',
      'Photo of the shop',
      '/contact',
      'photo.jpg',
    ]) {
      expect(text).not.toContain(furniture);
    }
  });

  it('falls back to the body and to the first heading for the title', () => {
    const { title, text } = htmlToMainText('<body><h1>Welcome</h1><p>Plain page.</p><footer>Footer</footer></body>');
    expect(title).toBe('Welcome');
    expect(text).toBe('Welcome\n\nPlain page.');
  });

  it('keeps every article of a listing page', () => {
    const { title, text } = htmlToMainText('<body><article>First post</article><article>Second post</article></body>');
    expect(title).toBeUndefined();
    expect(text).toContain('First post');
    expect(text).toContain('Second post');
  });
});

describe('extractLinks', () => {
  it('resolves links against the page URL, drops fragments and duplicates and keeps only http(s)', () => {
    const html = `
      <a href="/about">About</a>
      <a href="contact.html#form">Contact</a>
      <a href="contact.html">Contact again</a>
      <a href="../up">Up</a>
      <a href="?page=2">Next</a>
      <a href="#top">Top</a>
      <a href="https://other.example/x">Other site</a>
      <a href="mailto:someone@example.com">Mail</a>
      <a href="tel:+123">Call</a>
      <a href="javascript:void(0)">Script</a>
      <a href="http://[invalid">Broken</a>
      <a>No href</a>`;
    expect(extractLinks(html, 'https://site.example/docs/index.html')).toEqual([
      'https://site.example/about',
      'https://site.example/docs/contact.html',
      'https://site.example/up',
      'https://site.example/docs/index.html?page=2',
      'https://site.example/docs/index.html',
      'https://other.example/x',
    ]);
  });

  it('resolves relative links against <base href>', () => {
    const html = '<head><base href="/guide/"></head><body><a href="intro">Intro</a><a href="../faq">FAQ</a></body>';
    expect(extractLinks(html, 'https://site.example/a/b/page')).toEqual([
      'https://site.example/guide/intro',
      'https://site.example/faq',
    ]);
  });
});
